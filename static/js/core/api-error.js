// The one error shape of the page: a failure carrying the API's error object (what the server
// answers, or what the page says in the same shape): {type, message, line?, column?, snippet?, caret?}.

export class ApiError extends Error {
  constructor(detail) {
    super(detail.message);
    this.detail = detail;
  }
}

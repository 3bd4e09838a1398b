"""A live class: a teacher's page drives, students' pages follow (PRODUCT §11, docs/live-class.md).

- `codes`: join codes, teacher tokens, nicknames (what a person types or is handed).
- `protocol`: the messages on the class's WebSocket, validated.
- `questions`: the right value of a question and its common wrong answers, from the engine; the
  board of answers.
- `store` / `redis_store`: where a class's state lives (this process, or Redis shared by many).
- `hub`: this process's connections: rooms, bounded per-client queues, fan-out.
- `routes`: `POST /api/class`, `GET /api/class/{code}`, the WebSocket, the join page `/c/{code}`.
"""

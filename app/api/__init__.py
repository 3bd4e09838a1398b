"""The JSON API's routers."""

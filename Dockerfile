# chainrule: docker build -t chainrule . && docker run -p 8000:8000 chainrule
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    WORKERS=2

# Graphviz draws the layout (dot) and the exports.
RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 chainrule

# The same installed package as `pip install 'chainrule[server]'`: templates, static files and
# lessons are package data, so the server runs from any directory (.dockerignore keeps tests and
# caches out). The wheel leaves out Pyodide (the sandbox's Python in the browser; a notebook never
# needs it): it is copied from the checkout beside the installed package's static files.
COPY . /tmp/chainrule-src
RUN pip install '/tmp/chainrule-src[server]' \
    && cp -r /tmp/chainrule-src/static/vendor/pyodide \
       "$(python -c 'import chainrule.app.build.bundle as b; print(b.STATIC_DIR)')/vendor/" \
    && rm -rf /tmp/chainrule-src

WORKDIR /home/chainrule
USER chainrule
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"

# Shell form so that $WORKERS is expanded; exec so uvicorn gets the signals.
# A live class's WebSocket messages are tiny (no zlib state per socket) and at most 1 MiB.
CMD exec uvicorn chainrule.app.main:app --host 0.0.0.0 --port 8000 --workers ${WORKERS:-2} \
    --ws-per-message-deflate false --ws-max-size 1048576 \
    --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-}"

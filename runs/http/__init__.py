"""What the pages (runs/web/) and the API (runs/api/) both need to speak HTTP, so that
neither imports the other:

    responses.py   JSON with <, > and & escaped, long responses streamed, and a finished
                   batch's stored response sent only when the client does not hold it
    uploads.py     uploads refused as soon as they are too large, before they are read
    deflated.py    a stored part compressed once, sent spliced within each response's gzip
    health_down.py the health page from Redis while the results database is down
"""

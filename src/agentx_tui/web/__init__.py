"""`--web`: the dashboard served to browsers, for live demos (docs/web.md).

    serve.serve_web     check the run's flags, then serve pages (cli.py's entry)
    address             `--web [HOST:]PORT`, loopback or not
    command             what each page runs: the dashboard's flags, less --web and the key; the title
    server              textual-serve's Server: one page at a time, each page's run stopped with it
    page                the program behind a page: `agentx-tui` set up for textual-serve's pipe

Nothing is imported here: a page's run imports `web.page` and should not pay for the server's imports.
"""

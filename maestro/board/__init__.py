"""`maestro board`: the project's run in a browser, live, and steered from there.

``server`` (HTTP, token, event stream), ``feed`` (follows the engine's records),
``snapshot`` (what the page shows, read from the plan, the run folder and the office),
``actions`` (the page's buttons, each the `maestro` command a shell user would run),
``transcript`` (a spoke's streamed output as readable entries), ``static/`` (the page).
The standard library only: nothing here weighs on the commands a hub runs in a loop.
"""

#!/usr/bin/env python3
"""usage: daynote.py BASELINE_CAPTURE_DIR — prints a note when httpyac's saved captures are from another
UTC day than today (VOLLEY_ONLY=1 runs): values made from the current date cannot match them any more."""
import datetime, json, os, sys
d, days = sys.argv[1], set()
for fn in os.listdir(d):
    lines = open(os.path.join(d, fn)).readlines()
    for l in lines[:1] + lines[-1:]:
        days.add(datetime.datetime.fromtimestamp(json.loads(l)['t'], datetime.timezone.utc).date().isoformat())
today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
if days != {today}:
    print(f"note: httpyac's captures are from {', '.join(sorted(days))} (UTC) and Volley ran on {today}: requests that "
          f"hold the current date (e.g. `$datetime` with a day format in examples/variables/restClient.http, 8 requests "
          f"identical in the 2026-11-29 runs) can no longer be identical; they show up as 'dynamic value — equivalent'")

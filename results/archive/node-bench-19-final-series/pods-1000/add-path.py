#!/usr/bin/env python3
# add-path.py KUBELET_LOG: for each pod s-NNN added by node-bench, the seconds from
# the kubelet reading its manifest to the first log line of each phase.
import re,sys,statistics
# per added pod s-NNN: time of each phase relative to "Reading config file"
phases=[("read",'"Reading config file" path=".*/(s-\d+)\.yaml"'),
 ("add",'"SyncLoop ADD" source="file" pods=\["default/(s-\d+)-'),
 ("first",'"Pod is being synced for the first time" pod="default/(s-\d+)-'),
 ("process",'"Processing pod event" pod="default/(s-\d+)-[^"]*" podUID="[^"]*" updateType="(?:sync|create)"'),
 ("enter",'"SyncPod enter" pod="default/(s-\d+)-'),
 ("wait",'"Waiting for volumes to attach and mount for pod" pod="default/(s-\d+)-'),
 ("done",'"All volumes are attached and mounted for pod" pod="default/(s-\d+)-')]
rx=[(n,re.compile(r)) for n,r in phases]
ts=re.compile(r'^[IWE]\d{4} (\d\d):(\d\d):(\d\d\.\d+)')
t={}
for line in open(sys.argv[1],errors='replace'):
    for n,r in rx:
        m=r.search(line)
        if m:
            mt=ts.match(line)
            if not mt: continue
            sec=int(mt.group(1))*3600+int(mt.group(2))*60+float(mt.group(3))
            t.setdefault(m.group(1),{}).setdefault(n,sec)
rows=[]
for pod in sorted(t):
    d=t[pod]
    if "read" not in d: continue
    rows.append([pod]+[round(d[n]-d["read"],2) if n in d else None for n,_ in phases[1:]])
print("pod", *[n for n,_ in phases[1:]])
for r in rows: print(*r)

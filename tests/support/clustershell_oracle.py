"""ClusterShell's NodeSet as an oracle: reads one JSON request per line on stdin and
writes one JSON answer per line on stdout, with the request's "id".

  {"expr": "esx[01-04]!esx02"} -> {"names": [...], "fold": "esx[01,03-04]"}
                                  or {"error": "NodeSetParseError: ..."}
  {"fold": ["esx01", "esx02"]} -> {"fold": "esx[01-02]"}

Groups come from ClusterShell's standard configuration, as for `nodeset`.
"""
import json
import sys

from ClusterShell.NodeSet import NodeSet


def answer(req):
    if "expr" in req:
        try:
            ns = NodeSet(req["expr"])
            return {"names": list(ns), "fold": str(ns)}
        except Exception as exc:  # every refusal counts, whatever its class
            return {"error": "%s: %s" % (type(exc).__name__, exc)}
    try:
        return {"fold": str(NodeSet.fromlist(req["fold"]))}
    except Exception as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        reply = answer(req)
        reply["id"] = req.get("id")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


main()

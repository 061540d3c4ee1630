#!/usr/bin/env python3
"""What docker/kubernetes/*.yaml promise beyond the API's schemas (tests/kubernetes/validate.sh
runs it after kubernetes-validate, with the pinned venv's python: PyYAML).

One line per check; the first failure raises and exits non-zero.
"""

import sys

import yaml


def say(what):
    print(f"kubernetes: {what}", flush=True)


def expect(cond, what):
    if not cond:
        raise SystemExit(f"kubernetes: FAIL: {what}")


def load(paths):
    docs = []
    for p in paths:
        with open(p) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def one(docs, kind):
    found = [d for d in docs if d.get("kind") == kind]
    expect(len(found) == 1, f"expected one {kind}, found {len(found)}")
    return found[0]


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def main(paths):
    docs = load(paths)
    dep = one(docs, "Deployment")
    pod = dep["spec"]["template"]
    spec = pod["spec"]
    labels = pod["metadata"]["labels"]
    expect(selects(dep["spec"]["selector"]["matchLabels"], labels), "the Deployment's selector misses its pods")
    [c] = [c for c in spec["containers"] if c["name"] == "docreader"]
    env = {e["name"]: e for e in c.get("env", [])}

    def value(name, default=None):
        e = env.get(name)
        return e.get("value", default) if e else default

    # The drain fits in the grace period: preStop sleep + DOCREADER_DRAIN_TIMEOUT_MS, set
    # explicitly (its default, deadline + grace, would change with them unnoticed).
    expect("DOCREADER_DRAIN_TIMEOUT_MS" in env, "DOCREADER_DRAIN_TIMEOUT_MS is not set explicitly")
    drain = int(value("DOCREADER_DRAIN_TIMEOUT_MS")) / 1000
    expect(drain > 0, "DOCREADER_DRAIN_TIMEOUT_MS is 0 (the default: deadline + grace)")
    deadline = int(value("DOCREADER_DEADLINE_MS", "120000")) / 1000
    grace = int(value("DOCREADER_GRACE_MS", "10000")) / 1000
    pre = c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    period = spec.get("terminationGracePeriodSeconds", 30)
    expect(period > pre + drain, f"terminationGracePeriodSeconds {period} does not exceed preStop {pre} s "
           f"+ drain {drain:g} s: the kubelet would kill replicas mid-drain")
    say(f"grace period {period} s > preStop {pre} s + drain {drain:g} s "
        f"(deadline {deadline:g} s + grace {grace:g} s {'fit in' if drain >= deadline + grace else 'do NOT fit in'} the drain)")

    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        got = c.get(probe, {}).get("httpGet", {})
        expect(got.get("path") == path, f"{probe} is not GET {path}: {got}")
        expect(got.get("port") in ports or got.get("port") in ports.values(),
               f"{probe} names port {got.get('port')}, not one of {ports}")
    say("readiness GET /readyz, liveness GET /healthz, on the container's port")

    sc = c.get("securityContext", {})
    expect(sc.get("readOnlyRootFilesystem") is True, "the root filesystem is not read-only")
    expect(sc.get("allowPrivilegeEscalation") is False, "privilege escalation is allowed")
    psc = spec.get("securityContext", {})
    expect(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001,
           "the pod does not run as the image's user 10001")
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    read_only = {m["mountPath"] for m in c.get("volumeMounts", []) if m.get("readOnly")}
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    data = mounts.get("/var/lib/docreader")
    vol = volumes.get(data or "", {})
    expect(data and ("emptyDir" in vol or "persistentVolumeClaim" in vol),
           "no volume at /var/lib/docreader (the data dir: everything written)")
    say("read-only root, as uid 10001, the data dir /var/lib/docreader on a volume")

    keys = value("DOCREADER_API_KEYS_FILE")
    expect(keys and "DOCREADER_API_KEYS" not in env, "the keys must come from DOCREADER_API_KEYS_FILE")
    mount = max((m for m in mounts if keys.startswith(m.rstrip("/") + "/")), key=len, default=None)
    expect(mount, f"DOCREADER_API_KEYS_FILE {keys} is on no mounted volume")
    secret = volumes[mounts[mount]].get("secret", {}).get("secretName")
    expect(secret, f"{mount} is not a Secret's volume")
    expect(mount in read_only, f"the keys' mount {mount} is not read-only")
    key = keys[len(mount.rstrip("/")) + 1:]
    secrets = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Secret"}
    if secret in secrets:  # the example Secret: it has the key the file is named by
        s = secrets[secret]
        expect(key in {**s.get("stringData", {}), **s.get("data", {})},
               f"Secret {secret} has no key {key!r}")
    refs = {e["valueFrom"]["secretKeyRef"]["name"] for e in env.values() if "secretKeyRef" in e.get("valueFrom", {})}
    for name in refs - set(secrets):
        expect(False, f"env names Secret {name}, which no manifest shows an example of")
    say(f"DOCREADER_API_KEYS_FILE {keys}: key {key!r} of Secret {secret}, mounted read-only")

    svc = one(docs, "Service")
    expect(selects(svc["spec"]["selector"], labels), "the Service does not select the Deployment's pods")
    for p in svc["spec"]["ports"]:
        expect(p["targetPort"] in ports or p["targetPort"] in ports.values(),
               f"the Service's targetPort {p['targetPort']} is not the container's")
    pdb = one(docs, "PodDisruptionBudget")
    expect(selects(pdb["spec"]["selector"]["matchLabels"], labels), "the PodDisruptionBudget does not select the pods")
    replicas = dep["spec"].get("replicas", 1)
    allowed = pdb["spec"].get("maxUnavailable", replicas - pdb["spec"].get("minAvailable", 0))
    expect(isinstance(allowed, int), "give the budget as a number of pods, not a percentage")
    expect(replicas >= 2 and 0 < allowed < replicas,
           f"with {replicas} replicas the budget allows {allowed} down at once: none could be drained, or all")
    say(f"the Service and the PodDisruptionBudget select the pods; {replicas} replicas, {allowed} down at a time")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Live preflight: read the cluster a values file is about to be installed into and report what `helm install`
would trip on (operator, namespace, Secret, PVC, GPU/EFA nodes), read-only, through the Kubernetes API."""

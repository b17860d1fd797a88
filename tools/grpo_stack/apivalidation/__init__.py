"""What the Kubernetes API server refuses in an object's fields, restated from k8s.io/apimachinery's validation
(names, label keys and values, quantities, ports, CIDRs) and k8s.io/kubernetes' API validation (selectors that
must match their template), so manifest mode refuses it at the key instead of at `kubectl apply`."""

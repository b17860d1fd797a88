"""A real Kubernetes control plane on loopback (etcd, API server, scheduler, controller manager, kwok, KubeRay)."""

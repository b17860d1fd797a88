// Command etcd runs the etcd server of go.etcd.io/etcd/server/v3 (its root module
// cannot be built as a dependency: it replaces its own submodules with local paths).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }

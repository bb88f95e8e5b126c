// Command temporal-server is the Temporal server (go.temporal.io/server, at
// the version go.mod pins) as hookrelay's production-shaped stack runs it
// (`make run-cluster`): every service in one process, configured by one
// YAML file, persisting to PostgreSQL. It is its own Go module so that
// hookrelay's module does not carry the server's dependencies.
package main

import (
	"flag"
	"fmt"
	"os"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the PostgreSQL persistence plugin
	"go.temporal.io/server/temporal"
)

func main() {
	file := flag.String("config-file", "", "the server's YAML configuration")
	flag.Parse()
	if err := run(*file); err != nil {
		fmt.Fprintln(os.Stderr, "temporal-server:", err)
		os.Exit(1)
	}
}

// run starts every service from the configuration file and blocks until an
// interrupt or SIGTERM stops them.
func run(file string) error {
	cfg, err := config.Load(config.WithConfigFile(file))
	if err != nil {
		return fmt.Errorf("load %s: %w", file, err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return err
	}
	s, err := temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithConfig(cfg),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
	)
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	return s.Start()
}

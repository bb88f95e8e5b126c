// Command temporal-server is the Temporal server (go.temporal.io/server, at
// the version go.mod pins) as hookrelay's production-shaped stack runs it
// (`make run-cluster`): one process per service (-service frontend,
// history, matching or worker; all four when none is given), configured by
// one YAML file each, persisting to PostgreSQL, finding each other through
// the membership table there. It is its own Go module so that hookrelay's
// module does not carry the server's dependencies.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the PostgreSQL persistence plugin
	"go.temporal.io/server/temporal"
)

// services is the -service flag: repeated, or comma-separated.
type services []string

func (s *services) String() string { return strings.Join(*s, ",") }

func (s *services) Set(v string) error {
	*s = append(*s, strings.Split(v, ",")...)
	return nil
}

func main() {
	file := flag.String("config-file", "", "the server's YAML configuration")
	var svcs services
	flag.Var(&svcs, "service", "a service to run (frontend, history, matching, worker); repeat it for several; default all four")
	flag.Parse()
	if len(svcs) == 0 {
		svcs = temporal.DefaultServices
	}
	if err := run(*file, svcs); err != nil {
		fmt.Fprintln(os.Stderr, "temporal-server:", err)
		os.Exit(1)
	}
}

// run starts the services from the configuration file and blocks until an
// interrupt or SIGTERM stops them.
func run(file string, svcs []string) error {
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
		temporal.ForServices(svcs),
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

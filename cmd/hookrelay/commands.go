package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/version"
)

// withApp runs f with the configuration from the environment.
func (e *session) withApp(f func(a *app, ctx context.Context) error) error {
	a, err := newApp(e.getenv, e.stdout, e.stderr)
	if err != nil {
		return err
	}
	defer a.stopTracing()
	return f(a, e.ctx)
}

// devCmd is `hookrelay dev`.
type devCmd struct{}

// Run runs everything on the embedded default until the context ends.
func (devCmd) Run(e *session) error { return e.withApp((*app).dev) }

// apiCmd is `hookrelay api`.
type apiCmd struct{}

// Run serves the API until the context ends.
func (apiCmd) Run(e *session) error { return e.withApp((*app).api) }

// workerCmd is `hookrelay worker`.
type workerCmd struct{}

// Run runs the workers until the context ends.
func (workerCmd) Run(e *session) error { return e.withApp((*app).worker) }

// migrateCmd is `hookrelay migrate [--down-to N]`.
type migrateCmd struct {
	DownTo int64 `name:"down-to" help:"Undo the migrations newer than this version instead (a downgrade; docs/security.md#downgrading)." default:"-1"`
}

// Run applies the migrations, or undoes the newer ones.
func (m *migrateCmd) Run(e *session) error {
	if m.DownTo >= 0 {
		return e.withApp(func(a *app, ctx context.Context) error { return a.migrateDown(ctx, m.DownTo) })
	}
	return e.withApp((*app).migrate)
}

// setupCmd is `hookrelay setup`.
type setupCmd struct {
	CreateNamespace bool `help:"Register TEMPORAL_NAMESPACE when it is missing."`
}

// Run prepares the cluster and the database.
func (s *setupCmd) Run(e *session) error {
	return e.withApp(func(a *app, ctx context.Context) error { return a.setup(ctx, s.CreateNamespace) })
}

// healthcheckCmd is `hookrelay healthcheck api|worker`.
type healthcheckCmd struct {
	Target string `arg:"" enum:"api,worker" help:"What to check: api or worker."`
}

// Run checks the target once.
func (h *healthcheckCmd) Run(e *session) error {
	return e.withApp(func(a *app, ctx context.Context) error { return a.healthcheck(ctx, h.Target) })
}

// policiesCmd is `hookrelay policies [list | show NAME]`.
type policiesCmd struct {
	List policiesListCmd `cmd:"" default:"1" help:"List the policies (the default)."`
	Show policiesShowCmd `cmd:"" help:"Print a policy's full schedule."`
}

type policiesListCmd struct{}

// Run lists the policies with their descriptions.
func (policiesListCmd) Run(e *session) error {
	for _, name := range policies.Names() {
		p, _ := policies.Lookup(name)
		fmt.Fprintf(e.stdout, "%-18s %s\n", name, p.Description)
	}
	return nil
}

type policiesShowCmd struct {
	Name string `arg:"" placeholder:"NAME" help:"The policy."`
}

// Run prints the policy's schedule.
func (s *policiesShowCmd) Run(e *session) error {
	p, err := policies.Lookup(s.Name)
	if err != nil {
		return err
	}
	return policies.Render(e.stdout, p)
}

// versionCmd is `hookrelay version`.
type versionCmd struct{}

// Run prints the version, and the commit and Go version the binary was
// built from.
func (versionCmd) Run(e *session) error {
	line := "hookrelay " + version.String()
	if c := version.Commit(); c != "" {
		line += " (commit " + c + ")"
	}
	_, err := fmt.Fprintln(e.stdout, line+" "+runtime.Version())
	return err
}

// Command hookrelay is durable webhook delivery on Temporal: the servers
// (dev, api, worker), their setup, and management commands that use the
// HTTP API through the Go client (subscriptions, endpoints, deliveries,
// dead-letters, recover, events, publish, keys, backlog). `hookrelay
// --help` lists them; docs/cli.md describes them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hookrelay:", err)
		os.Exit(1)
	}
}

// cli is the command line, one field per command (kong reads the tags).
type cli struct {
	Dev         devCmd         `cmd:"" group:"servers" help:"Run PostgreSQL, the Temporal dev server, the worker and the API together."`
	API         apiCmd         `cmd:"" name:"api" group:"servers" help:"Serve the HTTP API."`
	Worker      workerCmd      `cmd:"" group:"servers" help:"Run the Temporal workers."`
	Setup       setupCmd       `cmd:"" group:"servers" help:"Prepare a Temporal cluster (namespace, search attributes) and the database; idempotent."`
	Migrate     migrateCmd     `cmd:"" group:"servers" help:"Apply the database migrations."`
	Healthcheck healthcheckCmd `cmd:"" group:"servers" help:"Exit 0 when the API's /readyz (or the worker's /metrics) answers 200."`
	Policies    policiesCmd    `cmd:"" group:"servers" help:"List the delivery policies, or show one's schedule."`
	Receive     receiveCmd     `cmd:"" group:"servers" help:"Run a webhook receiver that prints what it gets (for trying hookrelay)."`
	Versions    versionsCmd    `cmd:"" group:"servers" help:"List the open runs of every workflow type by version (docs/development.md#retiring-workflow-versions)."`
	Secrets     secretsCmd     `cmd:"" group:"servers" help:"Count the stored secrets per encryption key, re-encrypt them under a new key, or make a key."`

	Subscriptions subscriptionsCmd `cmd:"" group:"manage" help:"List, read, create, change and delete subscriptions; rotate their secrets."`
	Endpoints     endpointsCmd     `cmd:"" group:"manage" help:"Endpoints' health; unfreeze, enable or disable one."`
	Deliveries    deliveriesCmd    `cmd:"" group:"manage" help:"List deliveries, read one with its attempts, retry one."`
	DeadLetters   deadLettersCmd   `cmd:"" name:"dead-letters" group:"manage" help:"List dead letters, read or redrive one."`
	Recover       recoverCmd       `cmd:"" group:"manage" help:"Redrive an endpoint's or a subscription's failed deliveries of a time window."`
	Events        eventsCmd        `cmd:"" group:"manage" help:"List events, read one with its deliveries, replay one."`
	Publish       publishCmd       `cmd:"" group:"manage" help:"Publish an event."`
	Backlog       backlogCmd       `cmd:"" group:"manage" help:"How far behind the account's deliveries are."`
	Keys          keysCmd          `cmd:"" group:"manage" help:"List, make and revoke an account's API keys (with the admin key)."`

	Version versionCmd `cmd:"" help:"Print hookrelay's version."`
	Help    helpCmd    `cmd:"" help:"Show help for a command."`
}

// description heads `hookrelay --help`.
const description = `Durable webhook delivery on Temporal.

The servers read their configuration from the environment (DATABASE_URL,
TEMPORAL_ADDRESS, HOOKRELAY_HTTP_ADDR, HOOKRELAY_ADMIN_KEY, …; docs/operations.md
lists them). The management commands reach the API at HOOKRELAY_URL
(default http://127.0.0.1:8080) with HOOKRELAY_API_KEY, and print tables, or
the API's JSON with --json (docs/cli.md).`

// session is what a command runs with: run's parameters.
type session struct {
	ctx    context.Context
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// run is the whole program, testable: it reads its arguments and
// environment through its parameters and writes only to stdout and stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	e := &session{ctx: ctx, getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		_, _ = parse(e, []string{"--help"}, stderr)
		return errors.New("no command given")
	}
	kctx, err := parse(e, args, stdout)
	if err != nil || kctx == nil {
		return err
	}
	return kctx.Run(e)
}

// errHelped ends a parse that printed help (kong's Exit(0)).
type errHelped struct{ code int }

// parse reads args into a fresh cli, writing help to out. It returns a nil
// context when help was printed: there is nothing to run.
func parse(e *session, args []string, out io.Writer) (kctx *kong.Context, err error) {
	parser, err := kong.New(&cli{}, kong.Name("hookrelay"), kong.Description(description),
		kong.Writers(out, e.stderr), kong.Exit(func(code int) { panic(errHelped{code}) }),
		kong.ExplicitGroups([]kong.Group{
			{Key: "servers", Title: "Servers (configured by the environment):"},
			{Key: "manage", Title: "Management (HOOKRELAY_URL, HOOKRELAY_API_KEY; --json for the API's JSON):"},
		}),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.BindToProvider(e.client))
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			h, ok := r.(errHelped)
			if !ok {
				panic(r)
			}
			kctx, err = nil, nil
			if h.code != 0 {
				err = fmt.Errorf("exit status %d", h.code)
			}
		}
	}()
	kctx, err = parser.Parse(args)
	if err != nil {
		return nil, fmt.Errorf("%w (see hookrelay --help)", err)
	}
	return kctx, nil
}

// helpCmd is `hookrelay help [COMMAND…]`: the same as COMMAND… --help.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command."`
}

// Run prints the help of the command named.
func (h *helpCmd) Run(e *session) error {
	_, err := parse(e, append(h.Command, "--help"), e.stdout)
	return err
}

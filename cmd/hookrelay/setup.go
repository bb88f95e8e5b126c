package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/workflows"
)

// setup prepares a Temporal cluster and a database for hookrelay, and can
// run again any time: it checks the namespace (registering it when create,
// --create-namespace, is set), registers the search attributes hookrelay's
// workflows use and applies the migrations.
func (a *app) setup(ctx context.Context, create bool) error {
	if a.cfg.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set")
	}
	c, err := a.dialTemporal(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ns := a.cfg.TemporalNamespace
	created, err := ensureNamespace(ctx, c, ns, create)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(a.stdout, "namespace %q registered\n", ns)
	}
	if err := a.registerAttributes(ctx, c, ns); err != nil {
		return err
	}
	if err := attributesAccepted(ctx, c, ns); err != nil {
		return err
	}
	if err := a.migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, "hookrelay is set up")
	return nil
}

// registerAttributes adds the missing search attributes and waits until
// the namespace lists them all; a namespace just registered can take a few
// seconds to be known everywhere, so "not found" is waited out too.
func (a *app) registerAttributes(ctx context.Context, c client.Client, ns string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		missing, err := missingSearchAttributes(ctx, c, ns)
		if err == nil && len(missing) == 0 {
			fmt.Fprintf(a.stdout, "search attributes registered on namespace %q\n", ns)
			return nil
		}
		if err == nil {
			err = addSearchAttributes(ctx, c, ns, missing)
		}
		var notFound *serviceerror.NamespaceNotFound
		if err != nil && !errors.As(err, &notFound) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal: search attributes %v not registered on %q after a minute (%v)", missing, ns, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// attributesAccepted waits until the namespace accepts a query naming every
// hookrelay search attribute. The server learns of attributes just
// registered when it next refreshes its namespace cache (a few seconds
// later), and until then refuses to start a delivery's workflow, which the
// sweeper would start only half a minute later: setup returns once
// deliveries can start.
func attributesAccepted(ctx context.Context, c client.Client, ns string) error {
	var terms []string
	for name, typ := range workflows.SearchAttributes() {
		value := "''"
		if typ == "Int" {
			value = "0"
		}
		terms = append(terms, name+" = "+value)
	}
	req := &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns, Query: strings.Join(terms, " AND ")}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, err := c.CountWorkflow(ctx, req)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal: namespace %q does not accept hookrelay's search attributes after a minute: %w", ns, err)
		}
	}
}

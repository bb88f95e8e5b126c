package devenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// probeTimeout bounds one readiness probe of the frontend.
const probeTimeout = 2 * time.Second

// parseSearchAttributes converts type names such as "Keyword" to enum values.
func parseSearchAttributes(attrs map[string]string) (map[string]enumspb.IndexedValueType, error) {
	parsed := make(map[string]enumspb.IndexedValueType, len(attrs))
	for name, typ := range attrs {
		v, err := enumspb.IndexedValueTypeFromString(typ)
		if err != nil || v == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("search attribute %s: unknown type %q", name, typ)
		}
		parsed[name] = v
	}
	return parsed, nil
}

// errExitedEarly is waitReady's error when the server exits before its
// frontend answers. The CLI picks its internal ports free, then binds them,
// and another process may take one in between; `make test` saw such an
// exit once. StartTemporal then launches it again.
var errExitedEarly = errors.New("server exited before answering")

// temporalStartTries is how many times StartTemporal launches a server
// that exits before answering.
const temporalStartTries = 3

// retryEarlyExit calls start until it returns other than errExitedEarly, at
// most tries times, telling retried of each early exit it retries.
func retryEarlyExit(tries int, start func() (*Temporal, error), retried func(error)) (*Temporal, error) {
	for try := 1; ; try++ {
		t, err := start()
		if err == nil || !errors.Is(err, errExitedEarly) || try >= tries {
			return t, err
		}
		retried(err)
	}
}

// waitReady polls the frontend until the namespace answers, then registers
// the search attributes the server did not.
func (t *Temporal) waitReady(ctx context.Context, attrs map[string]enumspb.IndexedValueType) error {
	ctx, cancel := context.WithTimeout(ctx, temporalStartTimeout)
	defer cancel()
	for {
		c, err := t.probe(ctx)
		if err == nil {
			defer c.Close()
			return ensureSearchAttributes(ctx, c, t.Namespace, attrs)
		}
		select {
		case <-t.done:
			return fmt.Errorf("%w: %v%s", errExitedEarly, t.waitErr, t.logHint())
		case <-ctx.Done():
			return fmt.Errorf("wait for frontend %s: %w (last error: %w)%s", t.Address, ctx.Err(), err, t.logHint())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probe dials the frontend and describes the namespace, returning the client
// when both work.
func (t *Temporal) probe(ctx context.Context) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  t.Address,
		Namespace: t.Namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	req := &workflowservice.DescribeNamespaceRequest{Namespace: t.Namespace}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, req); err != nil {
		c.Close()
		return nil, fmt.Errorf("describe namespace %s: %w", t.Namespace, err)
	}
	return c, nil
}

// ensureSearchAttributes adds the attributes missing from namespace. The dev
// server registers them only when it creates the namespace, so attributes
// configured after a DBFile was first used would otherwise be missing.
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	resp, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		have, ok := resp.GetCustomAttributes()[name]
		if !ok {
			missing[name] = typ
		} else if have != typ {
			return fmt.Errorf("search attribute %s is registered as %s but configured as %s (use a new DBFile)", name, have, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx,
		&operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

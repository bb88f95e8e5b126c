package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hookrelay/hookrelay/workflows"
)

// dialTemporal connects to Temporal with the configured address, namespace,
// TLS and API key, reporting the SDK's metrics.
func (a *app) dialTemporal(ctx context.Context) (client.Client, error) {
	mh, _ := a.metrics.TemporalHandler() // reports until the process ends
	opts := client.Options{
		HostPort: a.cfg.TemporalAddress, Namespace: a.cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(a.logger.With("component", "temporal")),
		MetricsHandler: mh,
		Interceptors:   a.tracing.ClientInterceptors(),
	}
	// Requests go uncompressed: hookrelay's are small (ids and a policy),
	// and the SDK's default gzip cost its process a tenth of its CPU per
	// delivery (profiled), and the server inflated every request (BENCHMARKS.md).
	opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	if a.firsts != nil {
		opts.ConnectionOptions.DialOptions = []grpc.DialOption{grpc.WithChainUnaryInterceptor(watchEager(a.firsts.NotEager))}
	}
	t := a.cfg.Temporal
	if t.TLS {
		tc, err := tlsConfig(t.CAFile, t.CertFile, t.KeyFile, t.ServerName)
		if err != nil {
			return nil, err
		}
		opts.ConnectionOptions.TLS = tc
	}
	if t.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(t.APIKey)
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", a.cfg.TemporalAddress, err)
	}
	return c, nil
}

// tlsConfig is the client TLS of the Temporal connection.
func tlsConfig(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	tc := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS CA: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("temporal TLS CA %s: no PEM certificate", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal TLS client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// errNotSetUp is why a worker or API stops on a cluster without hookrelay's
// search attributes: Temporal would refuse every workflow start.
var errNotSetUp = errors.New("run `hookrelay setup` against this Temporal cluster first")

// missingSearchAttributes lists hookrelay's search attributes the namespace
// lacks.
func missingSearchAttributes(ctx context.Context, c client.Client, ns string) ([]string, error) {
	res, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("temporal: list search attributes: %w", err)
	}
	var missing []string
	for name := range workflows.SearchAttributes() {
		if _, ok := res.GetCustomAttributes()[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// checkSetUp stops a worker or API whose cluster lacks the search attributes.
func checkSetUp(ctx context.Context, c client.Client, ns string) error {
	missing, err := missingSearchAttributes(ctx, c, ns)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("namespace %q lacks hookrelay's search attributes %v: %w", ns, missing, errNotSetUp)
	}
	return nil
}

// ensureNamespace checks that the namespace exists, and registers it (with a
// 7-day retention) when create is set.
func ensureNamespace(ctx context.Context, c client.Client, ns string, create bool) (bool, error) {
	_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
	var notFound *serviceerror.NamespaceNotFound
	switch {
	case err == nil:
		return false, nil
	case !errors.As(err, &notFound):
		return false, fmt.Errorf("temporal: describe namespace %q: %w", ns, err)
	case !create:
		return false, fmt.Errorf("temporal namespace %q does not exist: create it, or run `hookrelay setup --create-namespace`", ns)
	}
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(7 * 24 * time.Hour)})
	if err != nil {
		return false, fmt.Errorf("temporal: register namespace %q: %w", ns, err)
	}
	return true, nil
}

// addSearchAttributes registers the missing search attributes (none missing:
// nothing to do).
func addSearchAttributes(ctx context.Context, c client.Client, ns string, missing []string) error {
	if len(missing) == 0 {
		return nil
	}
	types := map[string]enums.IndexedValueType{}
	for _, name := range missing {
		types[name] = enums.IndexedValueType(enums.IndexedValueType_value["INDEXED_VALUE_TYPE_"+strings.ToUpper(workflows.SearchAttributes()[name])])
	}
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ns, SearchAttributes: types})
	if err != nil {
		return fmt.Errorf("temporal: add search attributes %v: %w", missing, err)
	}
	return nil
}

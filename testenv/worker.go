package testenv

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookrelay/hookrelay/egress"

	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

var (
	queueSeq      atomic.Int64
	queuePrefixes sync.Map // test name -> prefix
)

// QueuePrefix is a task-queue prefix of the test's own (the same on every
// call in one test), so that tests on the shared dev server run side by side
// without taking each other's tasks.
func QueuePrefix(t testing.TB) string {
	if p, ok := queuePrefixes.Load(t.Name()); ok {
		return p.(string)
	}
	p, _ := queuePrefixes.LoadOrStore(t.Name(),
		fmt.Sprintf("t%d-%d-%s", os.Getpid(), queueSeq.Add(1), sanitize(t.Name())))
	return p.(string)
}

// Starter starts workflows on st and the shared dev server, on the test's
// own task queues (those Worker serves).
func Starter(t testing.TB, c client.Client, st *store.Store) *starter.Starter {
	return &starter.Starter{Store: st, Temporal: c, Logger: Logger(), Queues: Queues(t)}
}

// Egress is the guard tests deliver through: the default deny list with
// loopback allowed, as under `hookrelay dev`, since every receiver of a test
// listens on loopback. It resolves no names (a test's receivers are
// addresses), so that no test sends even a DNS query off the machine.
func Egress() *egress.Guard {
	g := egress.New(egress.Loopback)
	g.Resolver = noNames{}
	return g
}

// noNames is a resolver that resolves nothing.
type noNames struct{}

func (noNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "tests resolve no names", Name: host, IsNotFound: true}
}

// Queues are task queues of the test's own.
func Queues(t testing.TB) workflows.Queues { return workflows.QueuesFor(QueuePrefix(t)) }

// Worker runs hookrelay's workers on st and the shared dev server as
// `hookrelay worker` does (worker.Start), on task queues of the test's own
// unless opts names a prefix, until the test ends. It returns a Starter
// that starts workflows on those queues.
func Worker(t testing.TB, c client.Client, st *store.Store, opts worker.Options) *starter.Starter {
	t.Helper()
	if opts.QueuePrefix == "" {
		opts.QueuePrefix = QueuePrefix(t)
	}
	if opts.Egress == nil {
		opts.Egress = Egress()
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := worker.Start(ctx, c, st, Logger(), opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); stop() })
	return &starter.Starter{Store: st, Temporal: c, Logger: Logger(), Defaults: opts.EdgeDefaults, Queues: opts.Queues()}
}

package store_test

import (
	"os"
	"testing"

	"github.com/hookrelay/hookrelay/testenv"
)

// TestMain stops the servers the tests started; it is the package's only
// TestMain (internal and external test files share it).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

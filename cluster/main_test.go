package cluster

import (
	"os"
	"testing"

	"github.com/hookrelay/hookrelay/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

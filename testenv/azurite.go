package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/devenv"
)

// Azurite starts an Azurite blob service of the test's own, on a free port
// with its data in a temporary directory, stopped when the test ends; the
// test skips without azurite-blob unless HOOKRELAY_REQUIRE_SERVERS=1.
func Azurite(t testing.TB) *devenv.Azurite {
	t.Helper()
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hookrelay-azurite-")
	if err != nil {
		t.Fatal(err)
	}
	a := startAzurite(t, devenv.AzuriteConfig{Port: port, DataDir: dir})
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return a
}

// RestartAzurite starts Azurite again where a (stopped) ran, with its blobs.
func RestartAzurite(t testing.TB, a *devenv.Azurite) *devenv.Azurite {
	t.Helper()
	return startAzurite(t, a.Config)
}

// startAzurite starts Azurite on cfg, stopped when the test ends.
func startAzurite(t testing.TB, cfg devenv.AzuriteConfig) *devenv.Azurite {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a, err := devenv.StartAzurite(ctx, cfg, Logger())
	if err != nil {
		skipOrFail(t, "azurite", err)
	}
	t.Cleanup(func() { _ = a.Stop() })
	return a
}

// StorageAccounts are credentials for Azurite's devstoreaccount1.
func StorageAccounts(t testing.TB, a *devenv.Azurite) *azstorage.Accounts {
	t.Helper()
	acc, err := azstorage.New([]string{a.ConnectionString()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

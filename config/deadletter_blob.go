package config

import (
	"fmt"
	"strings"
	"time"
)

// Environment variables of Event Grid dead letters in Azure Blob Storage
// (docs/eventgrid.md#dead-letters-in-azure-blob-storage).
const (
	EnvEventGridDeadLetterDelay = "HOOKRELAY_EVENTGRID_DEADLETTER_DELAY"
	// EnvAzureStorageConnectionString is Azure's own variable: one
	// storage account's connection string.
	EnvAzureStorageConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	// EnvAzureStorageConnectionStrings gives several, one a line.
	EnvAzureStorageConnectionStrings = "HOOKRELAY_AZURE_STORAGE_CONNECTION_STRINGS"
	// EnvAzureStorageEntraAccounts names accounts reached with Microsoft
	// Entra ID (azidentity.DefaultAzureCredential), comma-separated.
	EnvAzureStorageEntraAccounts = "HOOKRELAY_AZURE_STORAGE_ENTRA_ACCOUNTS"
)

// DefaultDeadLetterDelay is Azure Event Grid's wait before it writes a dead
// letter.
const DefaultDeadLetterDelay = 5 * time.Minute

// DeadLetterBlobs is how Event Grid dead letters reach Azure Blob Storage.
type DeadLetterBlobs struct {
	// Delay is the wait before each blob is written
	// (HOOKRELAY_EVENTGRID_DEADLETTER_DELAY, default 5m).
	Delay time.Duration
	// ConnectionStrings are the storage accounts' connection strings
	// (AZURE_STORAGE_CONNECTION_STRING, then one a line of
	// HOOKRELAY_AZURE_STORAGE_CONNECTION_STRINGS).
	ConnectionStrings []string
	// EntraAccounts are the storage accounts reached with Microsoft Entra
	// ID (HOOKRELAY_AZURE_STORAGE_ENTRA_ACCOUNTS).
	EntraAccounts []string
}

// loadDeadLetterBlobs reads c.DeadLetterBlobs.
func (c *Config) loadDeadLetterBlobs(getenv func(string) string) error {
	d := &c.DeadLetterBlobs
	d.Delay = DefaultDeadLetterDelay
	if v := strings.TrimSpace(getenv(EnvEventGridDeadLetterDelay)); v != "" {
		delay, err := time.ParseDuration(v)
		if err != nil || delay < 0 {
			return fmt.Errorf("config: %s=%q: want a Go duration of 0 or more, such as 5m or 1s", EnvEventGridDeadLetterDelay, v)
		}
		d.Delay = delay
	}
	d.ConnectionStrings = nil
	for _, cs := range append([]string{getenv(EnvAzureStorageConnectionString)},
		strings.Split(getenv(EnvAzureStorageConnectionStrings), "\n")...) {
		if cs = strings.TrimSpace(cs); cs != "" {
			d.ConnectionStrings = append(d.ConnectionStrings, cs)
		}
	}
	d.EntraAccounts = nil
	for _, name := range strings.Split(getenv(EnvAzureStorageEntraAccounts), ",") {
		if name = strings.TrimSpace(name); name != "" {
			d.EntraAccounts = append(d.EntraAccounts, name)
		}
	}
	return nil
}

package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
)

// Environment variables of hookrelay's Azure Event Grid face (docs/azure.md).
const (
	EnvEventGridTopic     = "HOOKRELAY_EVENTGRID_TOPIC"
	EnvEventGridSASSecret = "HOOKRELAY_EVENTGRID_SAS_SECRET"
)

// MinSASSecretLength is the shortest HOOKRELAY_EVENTGRID_SAS_SECRET accepted.
const MinSASSecretLength = 32

// EventGrid is how hookrelay looks to Azure Event Grid's publishers and
// receivers.
type EventGrid struct {
	// Topic is the template of an account's topic
	// (HOOKRELAY_EVENTGRID_TOPIC, default eventgrid.DefaultTopic; {account}
	// stands for the account's id): the topic of the Event Grid events
	// delivered, the source of CloudEvents published without one.
	Topic string
	// SASSecret derives each API key's Event Grid SAS key, which signs
	// aeg-sas-token credentials (HOOKRELAY_EVENTGRID_SAS_SECRET); empty
	// turns SAS tokens off (aeg-sas-key still works).
	SASSecret string
}

// loadEventGrid reads c.EventGrid.
func (c *Config) loadEventGrid(getenv func(string) string) error {
	c.EventGrid.Topic = or(getenv(EnvEventGridTopic), eventgrid.DefaultTopic)
	if t := c.EventGrid.Topic; strings.TrimSpace(t) != t {
		return fmt.Errorf("config: %s=%q: no leading or trailing spaces", EnvEventGridTopic, t)
	}
	c.EventGrid.SASSecret = getenv(EnvEventGridSASSecret)
	if s := c.EventGrid.SASSecret; s != "" && len(s) < MinSASSecretLength {
		return fmt.Errorf("config: %s is %d characters: want at least %d (for example `openssl rand -hex 32`)",
			EnvEventGridSASSecret, len(s), MinSASSecretLength)
	}
	return c.loadDeadLetterBlobs(getenv)
}

// Environment variables of Event Grid on IoT Edge (docs/policies.md#eventgrid-edge),
// spelled as the vendor spells them.
const (
	EnvEdgeMaxDeliveryAttempts = "broker__defaultMaxDeliveryAttempts"
	EnvEdgeEventTTLSeconds     = "broker__defaultEventTimeToLiveInSeconds"
)

// loadEdge reads the IoT Edge defaults into c.EdgeDefaults; a value that is
// not an integer in range stops start-up.
func (c *Config) loadEdge(getenv func(string) string) error {
	var err error
	if c.EdgeDefaults.MaxDeliveryAttempts, err = edgeVar(getenv, EnvEdgeMaxDeliveryAttempts,
		func(n int) policies.EdgeDefaults { return policies.EdgeDefaults{MaxDeliveryAttempts: n} }); err != nil {
		return err
	}
	c.EdgeDefaults.EventTimeToLiveInSeconds, err = edgeVar(getenv, EnvEdgeEventTTLSeconds,
		func(n int) policies.EdgeDefaults { return policies.EdgeDefaults{EventTimeToLiveInSeconds: n} })
	return err
}

// edgeVar parses one variable; "" is 0 (the policy's own default).
func edgeVar(getenv func(string) string, name string, as func(int) policies.EdgeDefaults) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("config: %s=%q: want an integer", name, v)
	}
	if n == 0 {
		return 0, fmt.Errorf("config: %s=%q: must not be 0", name, v)
	}
	if err := as(n).Validate(); err != nil {
		return 0, fmt.Errorf("config: %s=%q: %w", name, v, err)
	}
	return n, nil
}

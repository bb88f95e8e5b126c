package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hookrelay/hookrelay/policies"
)

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

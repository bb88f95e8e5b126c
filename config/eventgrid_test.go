package config_test

import (
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/eventgrid"
)

func load(env map[string]string) (config.Config, error) {
	return config.Load(func(k string) string { return env[k] })
}

// TestEventGridSettings: the topic template defaults to an Azure-shaped
// resource id per account and takes any other; a SAS secret shorter than
// 32 characters stops the start, naming the variable.
func TestEventGridSettings(t *testing.T) {
	cfg, err := load(nil)
	if err != nil || cfg.EventGrid.Topic != eventgrid.DefaultTopic || cfg.EventGrid.SASSecret != "" {
		t.Fatalf("defaults: %+v (%v)", cfg.EventGrid, err)
	}
	if got := eventgrid.Topic(cfg.EventGrid.Topic, "acct_1"); got != "/subscriptions/hookrelay/resourceGroups/acct_1/providers/Microsoft.EventGrid/topics/acct_1" {
		t.Errorf("default topic of acct_1: %s", got)
	}
	cfg, err = load(map[string]string{config.EnvEventGridTopic: "/topics/{account}", config.EnvEventGridSASSecret: strings.Repeat("s", 32)})
	if err != nil || eventgrid.Topic(cfg.EventGrid.Topic, "a") != "/topics/a" || len(cfg.EventGrid.SASSecret) != 32 {
		t.Errorf("set: %+v (%v)", cfg.EventGrid, err)
	}
	if _, err := load(map[string]string{config.EnvEventGridSASSecret: "short"}); err == nil || !strings.Contains(err.Error(), config.EnvEventGridSASSecret) {
		t.Errorf("short SAS secret: %v", err)
	}
	if _, err := load(map[string]string{config.EnvEventGridTopic: " /t "}); err == nil || !strings.Contains(err.Error(), config.EnvEventGridTopic) {
		t.Errorf("topic with spaces: %v", err)
	}
}

// TestTLSSettings: the API's certificate and key come both or neither; with
// them, the public URL defaults to https.
func TestTLSSettings(t *testing.T) {
	for _, env := range []map[string]string{{config.EnvTLSCert: "c.pem"}, {config.EnvTLSKey: "k.pem"}} {
		if _, err := load(env); err == nil || !strings.Contains(err.Error(), config.EnvTLSCert) || !strings.Contains(err.Error(), config.EnvTLSKey) {
			t.Errorf("%v: %v", env, err)
		}
	}
	cfg, err := load(map[string]string{config.EnvTLSCert: "c.pem", config.EnvTLSKey: "k.pem", config.EnvHTTPAddr: "0.0.0.0:8443"})
	if err != nil || !cfg.TLS.On() || cfg.PublicURL != "https://0.0.0.0:8443" {
		t.Errorf("with TLS: %+v %s (%v)", cfg.TLS, cfg.PublicURL, err)
	}
	if cfg, _ := load(nil); cfg.TLS.On() || !strings.HasPrefix(cfg.PublicURL, "http://") {
		t.Errorf("without TLS: %+v %s", cfg.TLS, cfg.PublicURL)
	}
}

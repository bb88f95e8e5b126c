// Command temporal-ui is the Temporal Web UI (github.com/temporalio/ui-server,
// the version the Temporal CLI embeds) for hookrelay's production-shaped
// stack: it serves the UI on -addr for the frontend at -temporal.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8233", "where the UI listens")
	temporal := flag.String("temporal", "127.0.0.1:7233", "the Temporal frontend")
	flag.Parse()
	host, portText, err := net.SplitHostPort(*addr)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil {
		fmt.Fprintln(os.Stderr, "temporal-ui: -addr must be host:port")
		os.Exit(2)
	}
	s := uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
		Host: host, Port: port, TemporalGRPCAddress: *temporal, EnableUI: true,
		CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true,
	}))
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "temporal-ui:", err)
		os.Exit(1)
	}
}

package bench

import (
	"fmt"
	"time"
)

// The peer's noisy-neighbour phase: Convoy's healthy endpoint (the run's
// receiver at peerPath) gets neighbourRate events a second alone, then
// beside a second endpoint of the same project in each neighbourScenario
// but (e), created through Convoy's API with a subscription of its own.
// Convoy's community edition retries every delivery by its project's
// strategy (peerRetries: the scenarios' every 5 s, so not (e)'s 8 minutes),
// and cuts every request at 10 s (a longer endpoint timeout is a licensed
// feature): (a)'s and (b)'s requests are cut and sent again.
const peerNoisyPath = "/noisy"

// peerNeighbours runs the noisy-neighbour phase on Convoy.
func (r *shippedRun) peerNeighbours(cv *convoy) {
	alone := r.healthyLoad("peer healthy alone", cv.sender("peer-nb-alone"), false, shippedPacedFor+3*time.Minute)
	for _, sc := range neighbourScenarios {
		// A scenario with a retry policy of its own ((e)) has none on
		// Convoy, whose project has one strategy for every endpoint.
		if sc.policy == "" && sc.wanted() {
			r.peerNeighbour(cv, sc, alone)
		}
	}
}

// peerNeighbour runs one scenario on Convoy and prints its line as
// "peer neighbour <scenario>".
func (r *shippedRun) peerNeighbour(cv *convoy, sc neighbourScenario, alone phaseResult) {
	rcv := newNoisyReceiver(r.b, sc.mode, sc.hold)
	endpoint, err := cv.addEndpoint("peer-"+sc.name, rcv.url+peerNoisyPath)
	if err != nil {
		r.b.Errorf("peer neighbour %s: %v", sc.name, err)
		return
	}
	healthy := func() phaseResult {
		// Convoy's healthy events wait minutes behind the other's: they
		// count as lost only after neighbourDrain.
		return r.healthyLoad("peer healthy beside "+sc.name, cv.sender("peer-nb-"+sc.name), true, neighbourDrain)
	}
	beside, o := misbehave(sc, rcv, cv.senderTo(endpoint, peerNoisyPath, "peer-"+sc.name), nil, healthy)
	line, _ := r.neighbourLine(sc, alone, beside, o)
	r.printf("peer neighbour %s", line)
	r.extra["peer neighbour "+sc.name] = line
}

// addEndpoint creates an endpoint of Convoy's project for url, with a
// subscription to every event type, and returns its id.
func (cv *convoy) addEndpoint(name, url string) (string, error) {
	var ep struct {
		UID string `json:"uid"`
	}
	err := cv.post("/endpoints", map[string]any{"name": name, "url": url, "secret": "peerbench-secret"}, &ep)
	if err == nil && ep.UID == "" {
		err = fmt.Errorf("convoy endpoint %s: no uid in the answer", name)
	}
	if err != nil {
		return "", err
	}
	err = cv.post("/subscriptions", map[string]any{"name": name, "endpoint_id": ep.UID,
		"filter_config": map[string]any{"event_types": []string{"*"}}}, nil)
	return ep.UID, err
}

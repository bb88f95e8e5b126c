package bench

import (
	"fmt"
	"strings"
	"time"
)

// The ordered phase (issue 26, docs/ordering.md): one ordered subscription,
// events over 1, 10 and 100 ordering keys from shippedPublishers
// publishers as fast as they are answered, beside the unordered saturated
// phase of the same run. With one key every delivery waits for the one
// before it: that phase publishes fewer events.
var shippedOrdered = []struct{ keys, events int }{{1, 300}, {10, 1000}, {100, 1000}}

// ordered runs the ordered phases and notes their throughput.
func (r *shippedRun) ordered() {
	subscribeJSON(r.b, r.dev.api, fmt.Sprintf(`{"url":%q,"event_types":["ordered"],"policy":"eventgrid","ordered":true}`,
		r.rcv.url+"/ordered"))
	var rates []string
	for _, o := range shippedOrdered {
		p := publisher{api: r.dev.api, typ: "ordered", prefix: fmt.Sprintf("ord-%d", o.keys),
			paths: []string{"/ordered"}, orderingKeys: o.keys}
		res := r.phase(fmt.Sprintf("ordered %d keys", o.keys), 10*time.Minute, func() []shot {
			return closedLoop(o.events, shippedPublishers, p.send)
		})
		rates = append(rates, fmt.Sprintf("%d keys %.1f/s", o.keys, res.perSecond))
	}
	if sat, ok := r.results["hookrelay saturated"]; ok {
		rates = append(rates, fmt.Sprintf("unordered (hookrelay saturated) %.1f/s", sat.perSecond))
	}
	r.extra["ordered"] = strings.Join(rates, ", ")
}

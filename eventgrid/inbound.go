package eventgrid

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// CloudEvents content types (structured mode).
const (
	ContentTypeCloudEvent      = "application/cloudevents+json"
	ContentTypeCloudEventBatch = "application/cloudevents-batch+json"
)

// Event is one published event in the Event Grid schema. Its topic, which
// Azure fills in and publishers may send, is not kept: the events delivered
// carry the account's topic (Topic).
type Event struct {
	ID              string          `json:"id"`
	Topic           string          `json:"topic"`
	Subject         string          `json:"subject"`
	EventType       string          `json:"eventType"`
	EventTime       string          `json:"eventTime"` // RFC 3339
	Data            json.RawMessage `json:"data"`
	DataVersion     string          `json:"dataVersion"`
	MetadataVersion string          `json:"metadataVersion"`
}

// Inbound is one published event, checked, as hookrelay stores it.
type Inbound struct {
	ID, Type, Subject string
	Data              json.RawMessage
	Time              time.Time
	// Schema fields: the Event Grid topic or CloudEvents source, the data
	// version (dataschema), the data's content type and CloudEvents
	// extension attributes.
	Source, DataVersion, DataContentType string
	Extensions                           json.RawMessage
}

// CheckEvent checks a decoded Event Grid event, the one at index idx of its
// batch ("[1]"), and maps it.
func CheckEvent(e Event, idx string) (Inbound, error) {
	p := idx + "."
	at, timeErr := time.Parse(time.RFC3339Nano, e.EventTime)
	switch {
	case e.ID == "" || len(e.ID) > 200:
		return Inbound{}, invalid(p+"id", "id is required (at most 200 characters)")
	case e.EventType == "" || len(e.EventType) > 200:
		return Inbound{}, invalid(p+"eventType", "eventType is required (at most 200 characters)")
	case e.Subject == "":
		return Inbound{}, invalid(p+"subject", "subject is required")
	case e.EventTime == "":
		return Inbound{}, invalid(p+"eventTime", "eventTime is required")
	case timeErr != nil:
		return Inbound{}, invalid(p+"eventTime", "eventTime must be an RFC 3339 timestamp, got %q", e.EventTime)
	case e.MetadataVersion != "" && e.MetadataVersion != "1":
		return Inbound{}, invalid(p+"metadataVersion", `metadataVersion must be "1"`)
	}
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return Inbound{ID: e.ID, Type: e.EventType, Subject: e.Subject, Data: data, Time: at,
		DataVersion: e.DataVersion}, nil
}

// ceExtension is the CloudEvents rule for attribute names.
var ceExtension = regexp.MustCompile(`^[a-z0-9]{1,20}$`)

// ParseCloudEvent maps one CloudEvents 1.0 event (its attributes, decoded
// but not checked; p prefixes field names, "[1]." in a batch); unknown
// attributes are extensions.
func ParseCloudEvent(r map[string]json.RawMessage, p string) (Inbound, error) {
	str := func(k string) (string, error) {
		var v string
		if raw, ok := r[k]; ok && json.Unmarshal(raw, &v) != nil {
			return "", invalid(p+k, "%s must be a string", k)
		}
		return v, nil
	}
	attrs := map[string]string{}
	for _, k := range []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema"} {
		v, err := str(k)
		if err != nil {
			return Inbound{}, err
		}
		attrs[k] = v
	}
	if attrs["specversion"] != "1.0" {
		return Inbound{}, invalid(p+"specversion", `specversion must be "1.0"`)
	}
	for _, k := range []string{"id", "source", "type"} {
		if attrs[k] == "" || len(attrs[k]) > 200 {
			return Inbound{}, invalid(p+k, "%s is required (at most 200 characters)", k)
		}
	}
	if _, ok := r["data_base64"]; ok {
		return Inbound{}, invalid(p+"data_base64", "binary data (data_base64) is not supported; send JSON data")
	}
	e := Inbound{ID: attrs["id"], Type: attrs["type"], Subject: attrs["subject"], Data: json.RawMessage("null"),
		Source: attrs["source"], DataContentType: attrs["datacontenttype"], DataVersion: attrs["dataschema"]}
	if d, ok := r["data"]; ok {
		e.Data = d
	}
	if t := attrs["time"]; t != "" {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return Inbound{}, invalid(p+"time", "time must be an RFC 3339 timestamp")
		}
		e.Time = at
	}
	ext, err := extensions(r, p)
	e.Extensions = ext
	return e, err
}

// extensions collects the extension attributes of a CloudEvent.
func extensions(r map[string]json.RawMessage, p string) (json.RawMessage, error) {
	known := "specversion id source type subject time datacontenttype dataschema data"
	ext := map[string]json.RawMessage{}
	for k, v := range r {
		if strings.Contains(" "+known+" ", " "+k+" ") {
			continue
		}
		if !ceExtension.MatchString(k) {
			return nil, invalid(p+k, "extension attribute names are 1 to 20 lowercase letters or digits")
		}
		ext[k] = v
	}
	b, _ := json.Marshal(ext)
	return b, nil
}

package eventgrid

import "strings"

// DefaultTopic is the template of an account's Event Grid topic: the
// `topic` of the Event Grid events its subscriptions get, and the `source`
// of CloudEvents published without one. {account} stands for the account's
// id. It is shaped as an Azure topic's resource id, which receivers written
// for Azure Event Grid expect.
const DefaultTopic = "/subscriptions/hookrelay/resourceGroups/{account}/providers/Microsoft.EventGrid/topics/{account}"

// AccountPlaceholder is replaced by the account's id in a topic template.
const AccountPlaceholder = "{account}"

// Topic is the topic of account under template (HOOKRELAY_EVENTGRID_TOPIC;
// "" is DefaultTopic). A template without {account} gives every account the
// same topic (one tenant keeping its Azure topic's id, say).
func Topic(template, account string) string {
	if template == "" {
		template = DefaultTopic
	}
	return strings.ReplaceAll(template, AccountPlaceholder, account)
}

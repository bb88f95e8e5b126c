package where_test

import (
	"fmt"

	"github.com/hookrelay/hookrelay/where"
)

func ExampleParse() {
	e, err := where.Parse("channel='webhook' and status in ('queued', 'failed') and config.url='https://example.com/hook'")
	if err != nil {
		fmt.Println(err)
		return
	}
	cols := where.Columns{"channel": "d.channel", "status": "d.status", "config.url": "s.url"}
	sql, args, err := e.SQL(cols, 2)
	fmt.Println(sql, args, err)

	_, err = where.Parse("status='x' or 1=1")
	fmt.Println(err)
	// Output:
	// d.channel = $2 AND d.status IN ($3, $4) AND s.url = $5 [webhook queued failed https://example.com/hook] <nil>
	// where: "or" is not supported; join comparisons with "and" at character 12
}

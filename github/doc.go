// Package github is perfbot's GitHub side: a go-github wrapper that reads
// pull requests, keeps one comment per pull request current (found by a
// hidden marker and edited in place), posts check runs, and a webhook
// handler for perfbot serve. The GitHub bot issue fills it in.
package github

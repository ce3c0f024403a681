// Package web holds no Go: it is tally's web client, an npm package of
// JavaScript for browsers (src/, typed by index.d.ts), whose tests go test
// runs here with Node.js, as the tests of the rest of tally run.
package web

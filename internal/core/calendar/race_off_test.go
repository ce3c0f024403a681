//go:build !race

package calendar

const raceOn = false

// Package cputime reads the CPU time this process has used, for the
// benchmarks and the bench's figures of compute.
package cputime

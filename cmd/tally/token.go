package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/internal/tools/authemu"
)

// tokenCommand signs a user in on the local Auth emulator and prints an ID
// token, for Increment's Authorization header when serve runs with
// TALLY_AUTH=firebase.
func tokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token EMAIL",
		Short: "Sign in on the local Auth emulator and print an ID token for Increment",
		Long: "token signs the user EMAIL in on the Firebase Auth emulator that 'TALLY_AUTH=firebase tally serve'\n" +
			"starts (creating the user the first time), and prints the user's ID token, for\n" +
			"Increment's header 'Authorization: Bearer TOKEN'. The token lasts an hour.\n" +
			"It never signs in on a real project: it needs " + authemu.EnvHost + ", as serve prints it.",
		Args: exactArgs(1, "one email"),
	}
	host := cmd.Flags().String("auth-host", os.Getenv(authemu.EnvHost), "the Auth emulator's host:port; env "+authemu.EnvHost)
	password := cmd.Flags().String("password", "password", "the user's password (6 characters or more)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if *host == "" {
			return usagef("%s is not set: token signs in on the Auth emulator only; "+
				"'TALLY_AUTH=firebase tally serve' starts one and prints the line to set", authemu.EnvHost)
		}
		u, err := authemu.SignIn(*host, args[0], *password)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), u.IDToken)
		return nil
	}
	return cmd
}

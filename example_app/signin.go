package main

import (
	"context"
	"fmt"
	"io"
)

// demoUser is the login page's user.
const demoUser = "demo"

// printSignIn sets up the login page's user and prints one "sign-in:" line
// on every start, so that `grep '^sign-in:'` of the output always says how
// to sign in:
//
//	sign-in: development mode, every sign-in is approved as "dev"        (-dev-login)
//	sign-in: user demo, password from EXAMPLE_PASSWORD                   ($EXAMPLE_PASSWORD)
//	sign-in: user demo, password Xy… (new; set EXAMPLE_PASSWORD …)       (first start on a database)
//	sign-in: user demo, password Xy… (new, from -reset-password)         (-reset-password)
//	sign-in: user demo, password as printed at the first start …         (any later start)
//
// The password itself is printed only when it is made: the database keeps
// its hash, not the password.
func printSignIn(ctx context.Context, w io.Writer, a *app) error {
	switch {
	case a.cfg.DevUser != "":
		_, err := fmt.Fprintf(w, "sign-in: development mode, every sign-in is approved as %q\n", a.cfg.DevUser)
		return err
	case a.cfg.Password != "":
		if err := a.oauth.SetPassword(ctx, demoUser, a.cfg.Password); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "sign-in: user %s, password from %s\n", demoUser, passwordEnv)
		return err
	case a.cfg.ResetPassword:
		pw, err := a.oauth.ResetPassword(ctx, demoUser)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "sign-in: user %s, password %s (new, from -reset-password)\n", demoUser, pw)
		return err
	}
	pw, err := a.oauth.EnsureUser(ctx, demoUser)
	if err != nil {
		return err
	}
	if pw != "" {
		_, err = fmt.Fprintf(w, "sign-in: user %s, password %s (new; set %s to choose it)\n", demoUser, pw, passwordEnv)
		return err
	}
	_, err = fmt.Fprintf(w, "sign-in: user %s, password as printed at the first start on this database; -reset-password prints a new one, or set %s\n", demoUser, passwordEnv)
	return err
}

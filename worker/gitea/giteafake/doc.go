// Package giteafake is a loopback fake of a Forgejo/Gitea server for tests
// and the demo, built from responses recorded on Forgejo 9
// (testdata/api): the repository ceo/demo as a scripted scenario left it,
// or a generated project (Options.Generate), served through the same REST
// paths, paging and error bodies, with webhooks signed and sent the way
// Gitea sends them.
//
// Accounts and sign-in (accounts.go, oauth.go, permissions.go) follow
// Gitea's routers/web/auth/oauth2_provider.go and
// routers/api/v1/repo/collaborators.go:
//   - Options.Token belongs to "ceo", the site admin who owns ceo/demo.
//     Every user also signs in with a password (DefaultPassword unless
//     SetPassword says otherwise), by basic auth in the API or on the login
//     page (/user/login, cookie i_like_gitea).
//   - OAuth2 applications are registered through the API
//     (/user/applications/oauth2; PATCH regenerates the secret, as in
//     Gitea) or RegisterOAuthApp. /login/oauth/authorize checks the client
//     and the exact redirect URI, wants PKCE (S256 or plain) from public
//     clients, and shows a grant page unless a confidential client was
//     granted before; /login/oauth/access_token authenticates the client
//     (form or basic auth), checks the code (10 minutes, once), the PKCE
//     verifier and the redirect URI, and answers Gitea's error codes and
//     descriptions. Access tokens last an hour; scopes other than openid,
//     profile, email and groups limit them by Gitea's read:/write: category
//     rule.
//   - A person's permission is the owner's "owner", a site admin's
//     "admin", else the greater of their collaborator grant and "read" for
//     a public repository. Organisation and team grants are not modelled
//     apart: Gitea folds them into the same answer. Only a site admin, a
//     repository admin or the person may ask. PUT/DELETE collaborators and
//     PATCH {"private": …} change it, as in Gitea.
//
// The recorded shapes of the collaborator-permission answer, an OAuth2
// application and a token answer were not captured from the server; they
// are written from Forgejo 9's swagger (testdata/api/swagger.v1.json in the
// shared recordings) and Gitea's convert and oauth2_provider code.
package giteafake

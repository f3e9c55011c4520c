#!/usr/bin/env bash
# A stand-in browser for the authorization-code tests: started with the authorization
# URL as its last argument (as Volley starts $VOLLEY_BROWSER), it follows the provider's
# redirect to its interaction, signs in as $OIDC_TEST_USER (default ada) with
# $OIDC_TEST_PASSWORD (default lovelace), and follows the redirects on to the redirect
# URI, where Volley's loopback listener takes the code. Needs curl.
set -euo pipefail
url="${!#}"
jar="$(mktemp)"
trap 'rm -f "$jar"' EXIT
interaction="$(curl -sS -o /dev/null -c "$jar" -b "$jar" -w '%{redirect_url}' "$url")"
curl -sS -L -o /dev/null -c "$jar" -b "$jar" \
    "$interaction/login?user=${OIDC_TEST_USER:-ada}&password=${OIDC_TEST_PASSWORD:-lovelace}"

"""`analytics-acp login google` and `analytics-acp logout google` (entry points of analytics_acp.commands).

Output never holds a secret: the refresh token, the access token and the client secret stay in the
credentials file. Failures are one line on stderr and a non-zero exit; nothing is half-written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROVIDER = "google"
DEFAULT_TIMEOUT_S = 300.0


def _fail(prog: str, message: str, code: int = 1) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    return code


def _login_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="analytics-acp login google",
        description="Sign in with a Google account for the Google ACPs (ga4, gsc, bigquery): the OAuth installed-app "
                    "flow in your browser; the result is a credentials file that sources.json can reference.")
    parser.add_argument("--client-secrets", type=Path, metavar="FILE",
                        help="the Desktop-app OAuth client JSON downloaded from the Google Cloud console (required to sign in)")
    parser.add_argument("--for", dest="acps", metavar="IDS", help="comma-separated Google ACPs to sign in for (default: every installed one)")
    parser.add_argument("--no-browser", action="store_true", help="print the URL instead of opening the browser")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"how long to wait for the browser (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--port", type=int, default=0, help="loopback port for the redirect (default: a free one)")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write the credentials here instead of the config folder")
    parser.add_argument("--sources", type=Path, metavar="FILE", help="sources.json whose --source gets these credentials")
    parser.add_argument("--source", metavar="ID", help="the source of --sources to update")
    parser.add_argument("--list", action="store_true", help="list the stored sign-ins (never a token) and exit")
    return parser


def _short(scope: str) -> str:
    return scope.rsplit("/", 1)[-1]


def _list() -> int:
    from .oauth_store import list_signins, public_view, signins_dir

    found = list_signins()
    if not found:
        print(f"No Google sign-ins in {signins_dir()}.")
        return 0
    for path, data in found:
        view = public_view(data)
        scopes = ", ".join(_short(str(s)) for s in view.get("scopes") or []) or "?"
        print(f"{view.get('email') or '(unknown account)'}  scopes: {scopes}  last refresh: {view.get('refreshed_at') or '?'}  file: {path}")
    return 0


def login_main(argv: list[str]) -> int:
    """Sign in with a Google account for the ga4, gsc and bigquery ACPs (`login google`)."""
    prog = "analytics-acp login"
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: analytics-acp login google [--client-secrets FILE] [--for IDS] [--no-browser] [--timeout S] "
              "[--port N] [--out FILE] [--sources FILE --source ID] [--list]\n"
              "Run 'analytics-acp login google --help' for details.")
        return 0 if argv else 2
    if argv[0] != PROVIDER:
        return _fail(prog, f"unknown provider {argv[0]!r} (available: {PROVIDER}).", 2)
    args = _login_parser().parse_args(argv[1:])
    if args.list:
        return _list()
    try:
        return _login(args, lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        return _fail(prog, "sign-in cancelled; nothing was saved.", 130)
    except Exception as exc:  # every expected failure is a LoginError/StoreError; the rest still gets one line
        from .login import LoginError
        from .oauth_store import StoreError

        if isinstance(exc, LoginError | StoreError):
            return _fail(prog, str(exc))
        return _fail(prog, f"sign-in failed ({type(exc).__name__}); nothing was saved.")


def _login(args: argparse.Namespace, say: Callable[[str], None]) -> int:
    from . import oauth_store
    from .login import choose_scopes, google_login_scopes, read_client_secrets, sign_in

    if (args.sources is None) != (args.source is None):
        raise oauth_store.StoreError("--sources and --source go together (the file and the id of the source to update).")
    if args.timeout <= 0:
        raise oauth_store.StoreError("--timeout must be a positive number of seconds.")
    if args.client_secrets is None:
        raise oauth_store.StoreError("--client-secrets FILE is required: the Desktop-app OAuth client JSON "
                                     "(see the analytics-acp-google README).")
    # Everything that can be checked is checked before the browser opens.
    secrets = read_client_secrets(args.client_secrets.expanduser())
    available = google_login_scopes()
    wanted = [p.strip() for p in args.acps.split(",") if p.strip()] if args.acps else None
    acps, scopes = choose_scopes(available, wanted)
    if args.sources is not None:
        data = oauth_store.load_sources(args.sources)
        entry = oauth_store.find_source(data, args.source, args.sources)
        if entry.get("acp") not in available:
            raise oauth_store.StoreError(f"Source {args.source!r} uses ACP {entry.get('acp')!r}, which has no Google sign-in.")
    if args.out is None:
        oauth_store.check_location(oauth_store.signin_path("probe"), explicit=False)

    say(f"Signing in for {', '.join(acps)} with scopes: {', '.join(_short(s) for s in scopes)} (plus your email address).")

    def show_url(url: str, not_opened: str | None) -> None:
        if args.no_browser:
            say(f"Open this URL in a browser to sign in (waiting {args.timeout:g} s):\n{url}")
        elif not_opened:
            say(f"Could not open a browser ({not_opened}). Open this URL in a browser on this machine to sign in "
                f"(waiting {args.timeout:g} s):\n{url}")
        else:
            say(f"Opened your browser to sign in (waiting {args.timeout:g} s). If it did not open, visit:\n{url}")

    result = sign_in(secrets, scopes, port=args.port, timeout_s=args.timeout, show_url=show_url, open_browser=not args.no_browser)
    creds = result.credentials
    path = oauth_store.signin_path(creds["email"] or None, args.out)
    dropped = oauth_store.scopes_dropped(path, creds["scopes"])
    oauth_store.save_signin(path, creds, explicit=args.out is not None)
    say(f"Signed in as {creds['email'] or '(account unknown)'}. Credentials saved to {path} (mode 0600).")
    if result.missing:
        lost = [acp for acp in acps if any(s in result.missing for s in available[acp])]
        say(f"Warning: the consent screen did not grant {', '.join(_short(s) for s in result.missing)}: "
            f"{', '.join(lost)} will be refused. Sign in again and tick every box.")
    if dropped:
        say(f"Note: this replaced an earlier sign-in of the same account that also covered "
            f"{', '.join(_short(s) for s in dropped)}; sources that need it will be refused until you sign in with "
            "--for naming every ACP you use.")
    if args.sources is not None:
        oauth_store.point_source_at(args.sources, args.source, path)
        say(f"Updated source {args.source!r} in {args.sources}: its credentials now reference that file.")
    else:
        entries = [{"id": acp, "acp": acp, "credentials": {"file": str(path)}} for acp in acps]
        say("Use it in sources.json (one source per ACP; add default_resource_id as needed):")
        say(json.dumps(entries, indent=2))
    return 0


def _logout_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="analytics-acp logout google",
                                     description="Revoke a Google sign-in and delete its credentials file.")
    parser.add_argument("--email", help="the account to sign out (needed when several are stored)")
    parser.add_argument("--file", type=Path, help="a credentials file written with login --out")
    parser.add_argument("--force", action="store_true", help="delete the file even when the revocation fails")
    return parser


def _pick(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    from .oauth_store import StoreError, list_signins, read_signin, signins_dir

    if args.file is not None:
        return args.file, read_signin(args.file)
    found = list_signins()
    if args.email:
        found = [(p, d) for p, d in found if str(d.get("email") or "").lower() == args.email.lower()]
    if not found:
        who = f" for {args.email}" if args.email else ""
        raise StoreError(f"No Google sign-in{who} in {signins_dir()}.")
    if len(found) > 1:
        emails = ", ".join(str(d.get("email") or p.name) for p, d in found)
        raise StoreError(f"Several sign-ins are stored ({emails}): pass --email.")
    return found[0]


def logout_main(argv: list[str]) -> int:
    """Revoke a Google sign-in and delete its credentials file (`logout google`)."""
    prog = "analytics-acp logout"
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: analytics-acp logout google [--email E] [--file FILE] [--force]")
        return 0 if argv else 2
    if argv[0] != PROVIDER:
        return _fail(prog, f"unknown provider {argv[0]!r} (available: {PROVIDER}).", 2)
    args = _logout_parser().parse_args(argv[1:])
    from .login import revoke
    from .oauth_store import StoreError

    try:
        path, data = _pick(args)
    except StoreError as exc:
        return _fail(prog, str(exc))
    who = data.get("email") or path.name
    problem = revoke(data)
    if problem is not None and not args.force:
        return _fail(prog, f"could not revoke the sign-in of {who}: {problem}. The file {path} was kept; "
                           "run again later, or add --force to delete it anyway.")
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        return _fail(prog, f"cannot delete {path}: {exc.strerror or type(exc).__name__}.")
    if problem is not None:
        print(f"{prog}: could not revoke the sign-in of {who}: {problem}. Deleted {path} anyway; remove the access at "
              "https://myaccount.google.com/permissions.", file=sys.stderr)
        return 0
    print(f"Signed out {who}: the refresh token was revoked and {path} deleted.")
    return 0

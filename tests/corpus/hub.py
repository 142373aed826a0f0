"""A tiny Hugging Face hub on 127.0.0.1, for the pull tests (none of them reaches the internet).

It serves what `huggingface_hub.snapshot_download` 2.x asks of a dataset repository, read from its source:
- `GET /api/datasets/OWNER/NAME[/revision/REV]`: the repository at a revision (`sha` is its commit);
- `GET /api/datasets/OWNER/NAME/tree/COMMIT?recursive=...`: the file list (`path`, `size`, git blob `oid`,
  and `lfs` for large files);
- `HEAD|GET /datasets/OWNER/NAME/resolve/COMMIT/PATH`: a small file itself (`ETag` = its blob id,
  `X-Repo-Commit`, `Content-Length`); a large (LFS) file as the hub serves it, a 302 to a CDN URL with
  `X-Linked-Etag` (its sha256) and `X-Linked-Size` (the CDN is a second server: another origin, whose
  redirect the library does not follow for the metadata, and to which it sends no token);
- errors as the hub words them: 404 with `X-Error-Code` `RepoNotFound`, `RevisionNotFound`, `EntryNotFound`.

Every request is recorded (`requests`), so a test can show that a pull did not touch the network. Each
response closes its connection (HTTP/1.0): once `stop()` returns, nothing answers on the port.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit -> path -> content
    branches: dict[str, str] = field(default_factory=dict)  # branch or tag -> commit
    lfs: set[str] = field(default_factory=set)  # paths stored as LFS files


class FixtureHub:
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self._servers = [ThreadingHTTPServer(("127.0.0.1", 0), _handler(self)) for _ in ("hub", "cdn")]
        self._threads = [
            # A short poll: stop() waits up to one poll for each server's loop to notice.
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.02}, name="fixture-hub", daemon=True)
            for s in self._servers
        ]
        for server, thread in zip(self._servers, self._threads, strict=True):
            server.daemon_threads = True
            thread.start()
        self.endpoint, self.cdn = (f"http://127.0.0.1:{s.server_address[1]}" for s in self._servers)

    def publish(self, repo_id: str, files: dict[str, bytes], *, branch: str = "main", lfs: tuple[str, ...] = ()) -> str:
        """A commit of `files` on `branch` (the files of the repo at that commit: nothing is inherited)."""
        repo = self.repos.setdefault(repo_id, Repo())
        commit = hashlib.sha1(json.dumps(sorted((p, c.hex()) for p, c in files.items())).encode()).hexdigest()
        repo.commits[commit] = dict(files)
        repo.branches[branch] = commit
        repo.lfs.update(lfs)
        return commit

    def stop(self) -> None:
        for server, thread in zip(self._servers, self._threads, strict=True):
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)

    # -- answers ------------------------------------------------------------------------------------------

    def answer(self, method: str, url: str) -> tuple[int, dict[str, str], bytes]:
        self.requests.append((method, url))
        parts = urlsplit(url)
        path = [unquote(p) for p in parts.path.split("/") if p]
        if path[:2] == ["api", "datasets"] and len(path) >= 4:
            return self._api(path[2] + "/" + path[3], path[4:])
        if path[:1] == ["datasets"] and len(path) >= 6 and path[3] == "resolve":
            return self._resolve(path[1] + "/" + path[2], path[4], "/".join(path[5:]))
        if path[:1] == ["cdn"] and len(path) == 2:
            return self._cdn(path[1])
        return 404, {}, b"not a hub route"

    def _api(self, repo_id: str, rest: list[str]) -> tuple[int, dict[str, str], bytes]:
        repo = self.repos.get(repo_id)
        if repo is None:
            return _error(404, "RepoNotFound", "Repository not found")
        if not rest or rest[0] == "revision":
            commit = self._commit(repo, rest[1] if len(rest) > 1 else "main")
            if commit is None:
                return _error(404, "RevisionNotFound", "Invalid rev id")
            siblings = [{"rfilename": p} for p in sorted(repo.commits[commit])]
            return _json({"id": repo_id, "sha": commit, "private": False, "siblings": siblings})
        if rest[0] == "tree" and len(rest) >= 2:
            commit = self._commit(repo, rest[1])
            if commit is None:
                return _error(404, "RevisionNotFound", "Invalid rev id")
            return _json([self._entry(repo, path, data) for path, data in sorted(repo.commits[commit].items())])
        return 404, {}, b"not a hub route"

    def _entry(self, repo: Repo, path: str, data: bytes) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "file", "path": path, "size": len(data), "oid": _blob_id(data)}
        if path in repo.lfs:
            entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
        return entry

    def _resolve(self, repo_id: str, revision: str, path: str) -> tuple[int, dict[str, str], bytes]:
        repo = self.repos.get(repo_id)
        if repo is None:
            return _error(404, "RepoNotFound", "Repository not found")
        commit = self._commit(repo, revision)
        if commit is None:
            return _error(404, "RevisionNotFound", "Invalid rev id")
        data = repo.commits[commit].get(path)
        if data is None:
            return _error(404, "EntryNotFound", "Entry not found", commit)
        if path in repo.lfs:
            sha = hashlib.sha256(data).hexdigest()
            return (
                302,
                {
                    "Location": f"{self.cdn}/cdn/{sha}",
                    "X-Repo-Commit": commit,
                    "X-Linked-Etag": f'"{sha}"',
                    "X-Linked-Size": str(len(data)),
                    "ETag": f'"{_blob_id(data)}"',
                },
                b"",
            )
        return 200, {"X-Repo-Commit": commit, "ETag": f'"{_blob_id(data)}"'}, data

    def _cdn(self, sha: str) -> tuple[int, dict[str, str], bytes]:
        for repo in self.repos.values():
            for files in repo.commits.values():
                for data in files.values():
                    if hashlib.sha256(data).hexdigest() == sha:
                        return 200, {"ETag": f'"{sha}"'}, data
        return 404, {}, b"no such blob"

    @staticmethod
    def _commit(repo: Repo, revision: str) -> str | None:
        return revision if revision in repo.commits else repo.branches.get(revision)


def _handler(hub: FixtureHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request a connection: a stopped hub answers nothing

        def do_GET(self) -> None:
            self._reply(send_body=True)

        def do_HEAD(self) -> None:
            self._reply(send_body=False)

        def _reply(self, *, send_body: bool) -> None:
            status, headers, body = hub.answer(self.command, self.path)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test output is the tests'
            pass

    return Handler


def _json(value: Any) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(value).encode()


def _error(status: int, code: str, message: str, commit: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"X-Error-Code": code, "X-Error-Message": message, "Content-Type": "application/json"}
    if commit is not None:
        headers["X-Repo-Commit"] = commit
    return status, headers, json.dumps({"error": message}).encode()


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def closed_endpoint() -> str:
    """A loopback URL nothing listens on: connections are refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"

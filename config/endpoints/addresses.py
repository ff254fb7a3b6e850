"""Where requests to a researcher's endpoint (an LLM judge, a chat system) may go: the address rules,
and a transport that connects only to the address that was checked.

An endpoint's base URL is its researcher's choice, so without care the server would post to the
lab's own services (loopback, private networks) or to a cloud metadata service. Rules:
- user-info in the URL (`http://user:pass@host/`) is refused: the client would send it as Basic
  auth instead of the endpoint's key;
- link-local addresses (169.254.0.0/16, fe80::/10, and IPv4 ones written as IPv6) are never used;
- loopback, private, unique-local and every other non-global address only where the operator
  opts in (`allow_private`, the setting JUDGE_ALLOW_PRIVATE_HOSTS);
- a host name is resolved once, when a batch of prompts is about to be sent; every address it
  resolves to is checked (one refused address refuses the name), and the requests then connect to
  the first checked address (`PinnedTransport`), not to whatever a second lookup would answer (DNS
  rebinding). The Host header and, for https, the certificate check and SNI keep the name.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "localhost.localdomain")


class HostRefused(Exception):
    """A target the rules refuse; the message says which host and why."""


def userinfo_problem(url, *, noun="judge"):
    """Why `url` may not carry user-info, or "". `noun` names what the URL is for ("judge", "chat system")."""
    netloc = urlsplit(url).netloc
    if "@" in netloc:
        return (
            "Give the base URL without a user name or password (user:pass@): "
            f"a {noun}'s key comes from its key variable."
        )
    return ""


def address_problem(host, address, *, allow_private, noun="judge"):
    """Why the server may not connect to `address` (an IP address, `host`'s), or ""."""
    address = ipaddress.ip_address(str(address).strip("[]").split("%")[0])
    plain = getattr(address, "ipv4_mapped", None) or address  # ::ffff:169.254.169.254 is 169.254.169.254
    if plain.is_link_local:
        return (
            f"{host} is a link-local address ({plain}: a cloud metadata service, not a {noun}); {noun}s may not use it."
        )
    if plain.is_multicast:
        return f"{host} is a multicast address ({plain}); {noun}s may not use it."
    if not plain.is_global and not allow_private:
        kind = "a loopback" if plain.is_loopback else "a private or reserved"
        where = "" if str(plain) == host.strip("[]") else f" ({plain})"
        return (
            f"{host} is {kind} address{where}: {noun}s may use such addresses only where the operator sets "
            f"JUDGE_ALLOW_PRIVATE_HOSTS=1 (a lab serving its own {noun} on this machine or network)."
        )
    return ""


def literal_problem(host, *, allow_private, noun="judge"):
    """The address rules for a host written as an IP address or as localhost; "" for other names
    (resolved and checked when requests are sent)."""
    host = host.lower().rstrip(".")
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return address_problem(host, "127.0.0.1", allow_private=allow_private, noun=noun)
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return ""
    return address_problem(host, host, allow_private=allow_private, noun=noun)


def checked_address(url, *, allow_private, noun="judge"):
    """The address the requests to `url` are to connect to: `url`'s host resolved, every address
    checked. HostRefused (saying why) for user-info, a refused address or a name that does not resolve."""
    problem = userinfo_problem(url, noun=noun)
    if problem:
        raise HostRefused(problem)
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise HostRefused(f"cannot reach {host}: the name does not resolve ({type(error).__name__})") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    for address in addresses:
        problem = address_problem(host, address, allow_private=allow_private, noun=noun)
        if problem:
            raise HostRefused(problem)
    if not addresses:
        raise HostRefused(f"cannot reach {host}: the name resolves to no address")
    return addresses[0]


def pinned_transport(host, address):
    """An httpx transport (the SDK's httpx2) whose connections go to `address` whatever the request's
    host name; the Host header, SNI and certificate check keep `host`."""
    import httpx2

    class PinnedTransport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request):
            if (request.url.host or "").rstrip(".").lower() != host.lower():
                # no redirects are followed, so this is never another host; refuse rather than guess
                raise HostRefused(f"a request for {request.url.host} on the connection pinned to {host}")
            if request.url.scheme == "https":
                request.extensions = {**request.extensions, "sni_hostname": host}
            request.url = request.url.copy_with(host=address)
            return await super().handle_async_request(request)

    return PinnedTransport()

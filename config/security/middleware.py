"""Response headers that apply to the whole app."""

NO_STORE = "private, no-store"


def no_store(get_response):
    """`Cache-Control: private, no-store` on every response that reaches Django's views.

    Researcher pages, their JSON and downloads hold unpublished study data, and annotator pages
    carry a CSRF token and an assignment: no browser or proxy cache may keep any of them. Static
    files are answered by WhiteNoise above this middleware and keep their long caching. A view's
    own, looser Cache-Control (e.g. `private, max-age=3600`) is replaced too: nothing dynamic is
    public here, and a shared computer's cache is exactly what this guards against.
    """

    def middleware(request):
        response = get_response(request)
        response["Cache-Control"] = NO_STORE
        return response

    return middleware

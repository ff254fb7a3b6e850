"""Amazon Mechanical Turk: the provider (`provider`), its halves (`sync`, `review`, `extend`), its errors,
its pure helpers (`pure`: no Django, no boto3) and its Celery tasks. The only package that imports boto3.

Nothing is imported here, so that `pure` loads without the provider's dependencies.
"""

"""Comments pinned to nodes, and a user's mentions (docs/collaboration.md, "Comments").
The views look the circuit up (circuits/access.py), parse the body and delegate to
circuits/comments/handler.py, which decides who may do what."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import readable_circuit
from ..comments import handler
from .comment_serializers import (
    CommentBodySerializer, MarkReadSerializer, MentionListSerializer, NewThreadSerializer, ThreadSerializer,
)

STATE = OpenApiParameter("state", str, enum=list(handler.THREAD_STATES), description="open, resolved or all (default).")
NODE = OpenApiParameter("node", str, description="Only the threads on this node id.")


def _valid(serializer_class, request):
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body.validated_data


class ThreadListView(APIView):
    """The circuit's comment threads (oldest first); POST starts one on a node."""

    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(parameters=[STATE, NODE], responses=ThreadSerializer(many=True))
    def get(self, request, pk):
        circuit = readable_circuit(request, pk)
        return Response(handler.threads(circuit, request.GET.get("state", "all"), request.GET.get("node")))

    @extend_schema(request=NewThreadSerializer, responses={201: ThreadSerializer})
    def post(self, request, pk):
        circuit = readable_circuit(request, pk)
        handler.require_participant(request.user, circuit)
        data = _valid(NewThreadSerializer, request)
        return Response(handler.create_thread(circuit, request.user, data["node"], data["body"]), status=status.HTTP_201_CREATED)


class ThreadView(APIView):
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(responses=ThreadSerializer)
    def get(self, request, pk, thread):
        from ..comments.present import thread_dict

        return Response(thread_dict(handler.thread_of(readable_circuit(request, pk), thread)))


class ReplyView(APIView):
    """Reply to a thread (replying to a resolved thread leaves it resolved)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=CommentBodySerializer, responses={201: ThreadSerializer})
    def post(self, request, pk, thread):
        found = handler.thread_of(readable_circuit(request, pk), thread)
        handler.require_participant(request.user, found.circuit)
        data = _valid(CommentBodySerializer, request)
        return Response(handler.reply(found, request.user, data["body"]), status=status.HTTP_201_CREATED)


class CommentView(APIView):
    """Edit (PATCH) or delete one's own comment. Deleting a thread's last comment deletes the thread."""

    permission_classes = [permissions.IsAuthenticated]

    def _comment(self, request, pk, thread, comment):
        found = handler.comment_of(handler.thread_of(readable_circuit(request, pk), thread), comment)
        handler._require_author(request.user, found)
        return found

    @extend_schema(request=CommentBodySerializer, responses=ThreadSerializer)
    def patch(self, request, pk, thread, comment):
        found = self._comment(request, pk, thread, comment)
        data = _valid(CommentBodySerializer, request)
        return Response(handler.edit_comment(found, request.user, data["body"]))

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk, thread, comment):
        handler.delete_comment(self._comment(request, pk, thread, comment), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ResolveView(APIView):
    """Resolve the thread (a writer of the circuit, or the thread's author)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses=ThreadSerializer)
    def post(self, request, pk, thread):
        return Response(handler.resolve(handler.thread_of(readable_circuit(request, pk), thread), request.user))


class ReopenView(APIView):
    """Reopen a resolved thread (a writer of the circuit, or the thread's author)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses=ThreadSerializer)
    def post(self, request, pk, thread):
        return Response(handler.reopen(handler.thread_of(readable_circuit(request, pk), thread), request.user))


class MentionListView(APIView):
    """Comments that mention the requester, on circuits they can still read (newest first)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(parameters=[OpenApiParameter("state", str, enum=list(handler.MENTION_STATES),
                                                description="unread, read or all (default).")],
                   responses=MentionListSerializer)
    def get(self, request):
        return Response(handler.mentions_of(request.user, request.GET.get("state", "all")))


class MentionReadView(APIView):
    """Mark some (`ids`) or all (`all: true`) of the requester's mentions read."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=MarkReadSerializer, responses=MentionListSerializer)
    def post(self, request):
        data = _valid(MarkReadSerializer, request)
        return Response(handler.mark_read(request.user, data.get("ids"), data["all"]))

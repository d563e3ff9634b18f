"""Session login for the browser, token for scripts."""
from django.contrib.auth import authenticate, login, logout
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from rest_framework import permissions, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.response import Response
from rest_framework.views import APIView


class Credentials(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False)


def authenticate_request(request):
    """The user for the username/password in the body, or None."""
    creds = Credentials(data=request.data)
    creds.is_valid(raise_exception=True)
    return authenticate(request, **creds.validated_data)


INVALID = {"detail": "Invalid username or password.", "errors": []}


@method_decorator(ensure_csrf_cookie, name="dispatch")
class MeView(APIView):
    permission_classes = [permissions.AllowAny]

    def get(self, request):
        user = request.user
        return Response({"authenticated": user.is_authenticated, "username": user.username if user.is_authenticated else None})


@method_decorator(csrf_protect, name="dispatch")
class LoginView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    def post(self, request):
        user = authenticate_request(request)
        if user is None:
            return Response(INVALID, status=status.HTTP_400_BAD_REQUEST)
        login(request, user)
        return Response({"username": user.username})


class LogoutView(APIView):
    permission_classes = [permissions.AllowAny]

    def post(self, request):
        logout(request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenView(APIView):
    """POST username + password -> {"token": ...} for `Authorization: Token <token>`."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []

    def post(self, request):
        user = authenticate_request(request)
        if user is None:
            return Response(INVALID, status=status.HTTP_400_BAD_REQUEST)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})

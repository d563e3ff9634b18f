"""Session login for the browser, token for scripts, registration."""
from django.contrib.auth import authenticate, get_user_model, login, logout
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from rest_framework import permissions, serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from .throttles import LoginThrottle, RegisterThrottle


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

    @extend_schema(responses=inline_serializer("Me", {"authenticated": serializers.BooleanField(),
                                                      "username": serializers.CharField(allow_null=True)}))
    def get(self, request):
        user = request.user
        return Response({"authenticated": user.is_authenticated, "username": user.username if user.is_authenticated else None})


@method_decorator(csrf_protect, name="dispatch")
class LoginView(APIView):
    permission_classes = [permissions.AllowAny]
    authentication_classes = []
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, LoginThrottle]

    @extend_schema(request=Credentials, responses=inline_serializer("LoggedIn", {"username": serializers.CharField()}))
    def post(self, request):
        user = authenticate_request(request)
        if user is None:
            return Response(INVALID, status=status.HTTP_400_BAD_REQUEST)
        login(request, user)
        return Response({"username": user.username})


class LogoutView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        logout(request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenView(APIView):
    """POST username + password -> {"token": ...} for `Authorization: Token <token>`."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, LoginThrottle]

    @extend_schema(request=Credentials, responses=inline_serializer("AuthToken", {"token": serializers.CharField()}))
    def post(self, request):
        user = authenticate_request(request)
        if user is None:
            return Response(INVALID, status=status.HTTP_400_BAD_REQUEST)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class Registration(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, write_only=True)
    email = serializers.EmailField(required=False, allow_blank=True, default="")

    def validate_username(self, username):
        User = get_user_model()
        field = User._meta.get_field(User.USERNAME_FIELD)
        for validator in field.validators:
            try:
                validator(username)
            except DjangoValidationError as e:
                raise serializers.ValidationError(list(e.messages)) from None
        if User.objects.filter(username__iexact=username).exists():
            raise serializers.ValidationError("A user with that username already exists.")
        return username

    def validate(self, data):
        User = get_user_model()
        try:  # Django's AUTH_PASSWORD_VALIDATORS, including similarity to username/email
            validate_password(data["password"], user=User(username=data["username"], email=data.get("email", "")))
        except DjangoValidationError as e:
            raise serializers.ValidationError({"password": list(e.messages)}) from None
        return data


@method_decorator(csrf_protect, name="dispatch")
class RegisterView(APIView):
    """Create an account and log it in (a session, as after /api/auth/login/)."""

    permission_classes = [permissions.AllowAny]
    authentication_classes = []
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, RegisterThrottle]

    @extend_schema(request=Registration, responses={201: inline_serializer("Registered", {"username": serializers.CharField()})})
    def post(self, request):
        body = Registration(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        user = get_user_model().objects.create_user(data["username"], email=data.get("email") or "", password=data["password"])
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response({"username": user.username}, status=status.HTTP_201_CREATED)

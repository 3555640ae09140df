"""A server's ``oauth`` settings in the config file: how Moka gets its tokens when not by registering itself."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OAuthGrant = Literal["authorization_code", "client_credentials", "cross_app_access"]
TokenAuthMethod = Literal["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]


class OAuthSettings(BaseModel):
    """How Moka gets a streamable-HTTP server's tokens, when not by registering itself (``oauth`` of an entry).

    Secrets never live here: client secrets, private keys and ID tokens are kept in the OS keyring or
    the owner-only token file (``core/mcp/oauth/credentials.py``), set with ``moka servers oauth`` or
    the server's dialog.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # authorization_code: a person signs in; client_credentials: the client alone (machine to machine);
    # cross_app_access: the identity provider's token exchange, then the jwt-bearer grant (SEP-990).
    grant: OAuthGrant = "authorization_code"
    client_id: str | None = Field(default=None, alias="clientId", min_length=1)
    # How the client proves itself at the token endpoint; None: a secret if one is stored, else none.
    auth_method: TokenAuthMethod | None = Field(default=None, alias="authMethod")
    # The authorization server the client's credentials belong to; they are sent nowhere else.
    issuer: str | None = None
    scope: str | None = None
    signing_algorithm: str = Field(default="RS256", alias="signingAlgorithm")  # private_key_jwt
    idp_token_endpoint: str | None = Field(default=None, alias="idpTokenEndpoint")  # cross_app_access
    idp_client_id: str | None = Field(default=None, alias="idpClientId")  # cross_app_access

    @model_validator(mode="after")
    def _complete(self) -> OAuthSettings:
        for key, value in (("issuer", self.issuer), ("idpTokenEndpoint", self.idp_token_endpoint)):
            if value is not None and not value.startswith(("http://", "https://")):
                raise ValueError(f"oauth '{key}' must start with http:// or https://, got {value!r}")
        if self.grant != "authorization_code":
            missing = [k for k, v in (("clientId", self.client_id), ("issuer", self.issuer)) if not v]
            if self.grant == "cross_app_access":
                missing += [k for k, v in (("idpTokenEndpoint", self.idp_token_endpoint),
                                           ("idpClientId", self.idp_client_id)) if not v]
            if missing:
                raise ValueError(f"oauth grant {self.grant!r} needs {', '.join(missing)}")
        if self.auth_method == "private_key_jwt" and self.grant != "client_credentials":
            raise ValueError("oauth authMethod 'private_key_jwt' is for the client_credentials grant")
        return self

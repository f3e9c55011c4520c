// A response handler in a file, JetBrains style.
client.test("authenticated", function () {
  client.assert(response.body.authenticated === true, "not authenticated");
});
client.log("sent to", request.url.tryGetSubstituted().replace(/:\d+/, ":PORT"));

"""The mutation API's Spark form (`versioned.mutation.apply`): the only Spark code of the client."""
